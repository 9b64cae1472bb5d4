// The recovery codes page's one enhancement: "Copy codes" (the page works without it: the codes
// can be selected, downloaded and printed). Loaded from the service's own origin (script-src 'self').
'use strict';
/* global document, navigator */
(function () {
  const button = document.querySelector('[data-copy-codes]');
  const status = document.querySelector('[data-copy-status]');
  if (!button || !status || !navigator.clipboard) return;
  button.hidden = false;
  button.addEventListener('click', async () => {
    const codes = Array.from(document.querySelectorAll('.codes code'), (code) => code.textContent.trim());
    try {
      await navigator.clipboard.writeText(codes.join('\n') + '\n');
      status.textContent = 'The codes are copied.';
    } catch {
      status.textContent = 'The codes could not be copied: select them, or download them.';
    }
  });
})();
