import { expect } from 'chai';
import { createPublishWindow } from '../src/delivery/publish-window.ts';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('publish window', () => {
  it('sends a lone batch at the end of the event-loop turn, in order', async () => {
    const sent: number[] = [];
    const window = createPublishWindow(60_000);
    window.defer(() => sent.push(1));
    window.defer(() => sent.push(2));
    expect(sent, 'not synchronously').to.deep.equal([]);
    await nextTurn();
    await nextTurn();
    expect(sent).to.deep.equal([1, 2]);
  });

  it('holds what comes within the window after a send until the window has passed (or a flush)', async () => {
    const sent: number[] = [];
    const window = createPublishWindow(60_000);
    window.defer(() => sent.push(1));
    await nextTurn();
    await nextTurn();
    window.defer(() => sent.push(2));
    window.defer(() => sent.push(3));
    await nextTurn();
    await nextTurn();
    expect(sent, 'the second batch waits for the window').to.deep.equal([1]);
    window.flush();
    expect(sent).to.deep.equal([1, 2, 3]);
  });

  it('sends the held batch by itself once the window has passed', async () => {
    const window = createPublishWindow(1);
    window.defer(() => undefined);
    await nextTurn();
    const sent = new Promise<string>((resolve) => window.defer(() => resolve('sent')));
    expect(await sent).to.equal('sent');
  });
});
