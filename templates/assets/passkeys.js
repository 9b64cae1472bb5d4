/*
 * One of the service's two scripts, on the pages that offer a passkey (their Content-Security-Policy
 * allows this file only). A form with `data-passkey` ("get" to sign in, "create" to register)
 * carries the WebAuthn options the server made in `data-options`; on submit, the browser's
 * authenticator answers them, and the answer goes back in the form's `passkey_response`.
 */
/* global document, window, navigator, atob, btoa */
'use strict';

function toBytes(base64url) {
  const base64 = base64url.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function toBase64url(buffer) {
  let binary = '';
  for (const byte of new Uint8Array(buffer)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

const withIds = (list) => (list || []).map((c) => ({ ...c, id: toBytes(c.id) }));

function creationOptions(o) {
  return { ...o, challenge: toBytes(o.challenge), user: { ...o.user, id: toBytes(o.user.id) }, excludeCredentials: withIds(o.excludeCredentials) };
}

function requestOptions(o) {
  return { ...o, challenge: toBytes(o.challenge), allowCredentials: withIds(o.allowCredentials) };
}

/** The credential as the server reads it (the JSON of WebAuthn Level 3, written out for older browsers). */
function answerOf(credential) {
  const r = credential.response;
  const response = { clientDataJSON: toBase64url(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = toBase64url(r.attestationObject);
    response.transports = typeof r.getTransports === 'function' ? r.getTransports() : [];
  } else {
    response.authenticatorData = toBase64url(r.authenticatorData);
    response.signature = toBase64url(r.signature);
    if (r.userHandle) response.userHandle = toBase64url(r.userHandle);
  }
  return {
    id: credential.id, rawId: toBase64url(credential.rawId), type: credential.type, response,
    clientExtensionResults: credential.getClientExtensionResults(), authenticatorAttachment: credential.authenticatorAttachment || undefined,
  };
}

function say(form, text) {
  const status = form.querySelector('.passkey-status');
  if (status) status.textContent = text;
}

for (const form of document.querySelectorAll('form[data-passkey]')) {
  form.addEventListener('submit', async (event) => {
    const field = form.elements.namedItem('passkey_response');
    if (field.value) return;
    event.preventDefault();
    if (!window.PublicKeyCredential || !navigator.credentials) {
      say(form, 'This browser cannot use passkeys.');
      return;
    }
    say(form, '');
    try {
      const options = JSON.parse(form.dataset.options);
      const credential = form.dataset.passkey === 'create'
        ? await navigator.credentials.create({ publicKey: creationOptions(options) })
        : await navigator.credentials.get({ publicKey: requestOptions(options) });
      field.value = JSON.stringify(answerOf(credential));
      form.submit();
    } catch (error) {
      say(form, error && error.name === 'NotAllowedError'
        ? 'The passkey was not used: it was cancelled, or took too long. Try again.'
        : 'This browser or device could not use a passkey here.');
    }
  });
}
