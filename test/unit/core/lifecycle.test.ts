// The disposable base every long-lived object of the extension extends (src/vscode/common/lifecycle.ts has
// no vscode import, so it runs here): what an object registers is released once, newest first.
import * as assert from 'assert';
import { Disposable, toDisposable } from '../../../src/vscode/common/lifecycle';

class Owner extends Disposable {
  constructor(readonly order: string[]) {
    super();
    this._register(toDisposable(() => order.push('emitter')));
    this._registerAll(toDisposable(() => order.push('subscription a')), toDisposable(() => order.push('subscription b')));
  }
  own(name: string): void {
    this._register(toDisposable(() => this.order.push(name)));
  }
  get disposed(): boolean {
    return this.isDisposed;
  }
}

describe('disposable lifecycle', () => {
  it('releases what was registered newest first, once, however often dispose is called', () => {
    const order: string[] = [];
    const o = new Owner(order);
    o.own('late');
    assert.strictEqual(o.disposed, false);
    o.dispose();
    o.dispose();
    assert.deepStrictEqual(order, ['late', 'subscription b', 'subscription a', 'emitter']);
    assert.strictEqual(o.disposed, true);
  });

  it('releases at once what is registered after dispose', () => {
    const order: string[] = [];
    const o = new Owner(order);
    o.dispose();
    o.own('after');
    assert.deepStrictEqual(order.slice(-1), ['after']);
  });
});
