import { expect } from 'chai';
import { createPublishWindow } from '../src/events/publish-window.ts';

describe('publish window', () => {
  it('holds deferred sends until the window closes, then runs them in order in one go', async () => {
    const sent: number[] = [];
    const window = createPublishWindow(1000);
    window.defer(() => sent.push(1));
    window.defer(() => sent.push(2));
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent, 'nothing before the window closes').to.deep.equal([]);
    window.flush();
    expect(sent).to.deep.equal([1, 2]);
    window.defer(() => sent.push(3));
    window.flush();
    expect(sent, 'a new window after a flush').to.deep.equal([1, 2, 3]);
  });

  it('closes by itself after the window', async () => {
    const window = createPublishWindow(1);
    const sent = new Promise<string>((resolve) => window.defer(() => resolve('sent')));
    expect(await sent).to.equal('sent');
  });

  it('sends at once with a zero window', () => {
    const sent: number[] = [];
    createPublishWindow(0).defer(() => sent.push(1));
    expect(sent).to.deep.equal([1]);
  });
});
