import * as assert from 'assert';
import { Redactor } from '../../../src/core/config/redact';

describe('Redactor', () => {
  it('removes registered secrets and anything shaped like a Tinker key or a JWT', () => {
    const r = new Redactor();
    r.add('s3cret-value-123');
    const text = r.redact(
      'key s3cret-value-123 and tml-AbCdEf0123456789 and eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl in one line',
    );
    assert.ok(!text.includes('s3cret-value-123'));
    assert.ok(!text.includes('tml-AbCdEf0123456789'));
    assert.ok(!text.includes('eyJhbGciOiJIUzI1NiJ9'));
    assert.strictEqual(text.split('«redacted»').length - 1, 3);
  });

  it('leaves ordinary text alone and ignores too-short secrets', () => {
    const r = new Redactor();
    r.add('abc');
    assert.strictEqual(r.redact('abc def tml-'), 'abc def tml-');
  });
});
