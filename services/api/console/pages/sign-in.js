import { request } from '../lib/api.js';
import { html, useState } from '../lib/html.js';
import { session } from '../lib/session.js';

/**
 * Sign-in with a PAK (admin or generator). POST /auth/pak tells who it is; a rejected PAK is
 * never stored. Nothing here hands out a credential: you bring your own.
 */
export function SignIn({ onSignedIn }) {
  const [pak, setPak] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  async function submit(event) {
    event.preventDefault();
    setBusy(true);
    setError('');
    try {
      const who = await request('auth/pak', { method: 'POST', pak: pak.trim() });
      session.signIn(pak.trim(), who);
      onSignedIn(who);
    } catch (err) {
      setError(err.status === 401 ? 'That PAK was rejected.' : `Sign-in failed: ${err.message}`);
    } finally {
      setBusy(false);
    }
  }

  return html`
    <header class="top"><span class="brand">Brokkr</span></header>
    <form class="signin" onSubmit=${submit} data-testid="sign-in">
      <h1>Sign in</h1>
      <p class="muted">
        Paste a PAK (admin or generator). It stays in this browser tab only and is sent as
        <code>Authorization: Bearer …</code>. <code>npm start</code> prints an admin PAK.
      </p>
      <input type="password" name="pak" autocomplete="off" placeholder="brokkr_BR…" value=${pak} onInput=${(e) => setPak(e.target.value)} />
      <button class="primary" type="submit" disabled=${busy || !pak.trim()}>Sign in</button>
      ${error && html`<p class="bad" data-testid="sign-in-error">${error}</p>`}
    </form>
  `;
}
