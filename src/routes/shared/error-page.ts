/**
 * What the error page tells people: plain words for what happened and what to do, and a way
 * back where a safe one is known. The error code and its technical description stay on the page
 * for support. Links only ever go to this service's own pages or to an application's registered
 * redirect URI: never to an address the request itself carried before it was checked.
 */
import type { OAuthError } from '../../errors.ts';
import { formActionSource } from './pages.ts';

export interface ErrorPageContent {
  /** The page's heading. */
  heading: string;
  /** What happened and what to do, for people. */
  message: string;
  /** A way on: back to the application, or to one of this service's pages. */
  link?: { href: string; text: string };
}

/** Where the error happened and what is trusted there. */
export interface ErrorPlace {
  /** The route's path as registered ('/connect/authorize'). */
  route: string | undefined;
  /** The redirect URI of the authorization request, once client and URI are checked. */
  trustedRedirectUri: string | undefined;
  basePath: string;
  status: number;
}

const CANT = "This request can't be completed";

/** A browser asked for a path the service does not have. */
export const NOT_FOUND_PAGE: ErrorPageContent = {
  heading: 'Page not found',
  message: 'There is no page at this address. Check the address, or go back to the application you came from.',
};

/** The application's own site: the origin of its registered (checked) redirect URI. */
function backToApplication(redirectUri: string | undefined): ErrorPageContent['link'] {
  const origin = redirectUri ? formActionSource(redirectUri) : '';
  return /^https?:\/\//.test(origin) ? { href: `${origin}/`, text: 'Return to the application' } : undefined;
}

export function errorPageContent(error: OAuthError, place: ErrorPlace): ErrorPageContent {
  const back = backToApplication(place.trustedRedirectUri);
  if (place.status >= 500) {
    return error.code === 'temporarily_unavailable'
      ? { heading: 'Temporarily unavailable', message: 'The service cannot answer right now. Wait a moment, then try again.', link: back }
      : { heading: 'Something went wrong', message: 'Something went wrong on our side. Try again in a few minutes.', link: back };
  }
  if (place.status === 429) {
    return { heading: 'Too many attempts', message: 'Too many requests came from your network in a short time. Wait a minute, then try again.', link: back };
  }
  if (place.status === 413) {
    return { heading: CANT, message: 'What was sent is too large. Go back, shorten it and try again.', link: back };
  }
  if (place.route === '/connect/logout') {
    return {
      heading: "Sign-out can't be completed",
      message: 'The application asked to sign you out in a way this service cannot check, so nothing has changed. You can sign out here instead.',
      link: { href: `${place.basePath}/connect/logout`, text: 'Sign out' },
    };
  }
  if (place.route === '/connect/authorize') {
    return {
      heading: CANT,
      message: back
        ? 'The application asked to sign you in in a way this service does not allow. Go back to the application and try again.'
        : "The application that sent you here is not set up to sign in with this service. Go back to it and try again; if this keeps happening, tell the application's administrator.",
      link: back,
    };
  }
  // The sign-in steps describe their refusals for people already ("This sign-in has expired or
  // was already used. Start again from the application."): those words lead.
  if (place.route?.startsWith('/interaction/') || place.route?.startsWith('/signin/')) {
    return { heading: "This sign-in can't continue", message: error.description, link: back };
  }
  return { heading: CANT, message: 'Go back to the application you came from and try again.', link: back };
}
