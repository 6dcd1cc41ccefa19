// The PAK lives only in this tab's sessionStorage: closing the tab signs out, and it is never
// written to localStorage, a cookie or a URL.
const KEY = 'brokkr.console.pak';

export const session = {
  get pak() {
    return sessionStorage.getItem(KEY);
  },
  /** The identity POST /auth/pak returned: {admin, agent, generator}. */
  identity: null,
  signIn(pak, identity) {
    sessionStorage.setItem(KEY, pak);
    session.identity = identity;
  },
  signOut() {
    sessionStorage.removeItem(KEY);
    session.identity = null;
  },
};
