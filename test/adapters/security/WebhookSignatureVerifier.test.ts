import { createHmac } from 'node:crypto';
import { sign } from '@octokit/webhooks-methods';
import { WebhookSignatureVerifier } from '../../../src/adapters/security/WebhookSignatureVerifier.js';
import type { SignedRequest } from '../../../src/application/ports/SignatureVerifier.js';
import { ManualClock } from '../../support/fakes/ManualClock.js';

/**
 * The test vector of the first code host's webhook documentation ("Validating webhook
 * deliveries"): this secret and body give this X-Hub-Signature-256.
 */
const HUB_VECTOR = {
  secret: "It's a Secret to Everybody",
  body: 'Hello, World!',
  signature: 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
};

/**
 * The test vector of the Standard Webhooks reference libraries (the `sign` tests of
 * standard-webhooks / svix): this secret, id, timestamp and body give this signature.
 */
const STANDARD_VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

/**
 * Stripe publishes the header format (`t=1492774577,v1=<hex>,v0=<hex>`, "Verify manually" in its
 * webhook documentation) but not the secret behind that example. This vector follows the
 * published algorithm — HMAC-SHA256 keyed with the whole `whsec_` secret over `<t>.<body>` — with
 * the dummy secret and payload of Stripe's own library tests; `v1` was computed outside this code
 * with `openssl dgst -sha256 -hmac whsec_test_secret`.
 */
const STRIPE_VECTOR = {
  secret: 'whsec_test_secret',
  timestamp: 1492774577,
  body: '{\n  "id": "evt_test_webhook",\n  "object": "event"\n}',
  v1: 'c2f890decbc5ede7c5060bb9a6d31e0626a4342bacb9aeae2adb1bcea72f9812',
};

const at = (unixSeconds: number) => new ManualClock(new Date(unixSeconds * 1000));

function request(body: string | Uint8Array, headers: Record<string, string>): SignedRequest {
  return { rawBody: typeof body === 'string' ? Buffer.from(body) : body, headers };
}

describe('WebhookSignatureVerifier', () => {
  const verifier = new WebhookSignatureVerifier(at(1_700_000_000));

  describe('X-Hub-Signature-256 (first code host)', () => {
    it('verifies the documented test vector', () => {
      const signed = request(HUB_VECTOR.body, { 'x-hub-signature-256': HUB_VECTOR.signature });
      expect(verifier.verify(signed, [HUB_VECTOR.secret])).toEqual({ valid: true, scheme: 'hub-signature-256' });
      expect(verifier.verify(signed, ['another secret'])).toEqual({ valid: false, scheme: 'hub-signature-256' });
    });

    it("verifies what the code host's own library signs, upper-case hex too", async () => {
      const body = JSON.stringify({ action: 'opened', title: 'Ünïcode ✓' });
      const signature = await sign('s3cret', body);
      expect(verifier.verify(request(body, { 'x-hub-signature-256': signature }), ['s3cret']).valid).toBe(true);
      expect(
        verifier.verify(request(body, { 'x-hub-signature-256': `sha256=${signature.slice(7).toUpperCase()}` }), ['s3cret']).valid,
      ).toBe(true);
    });

    it('checks the exact bytes: a changed body fails', async () => {
      const signature = await sign('s3cret', '{"a":1}');
      expect(verifier.verify(request('{"a": 1}', { 'x-hub-signature-256': signature }), ['s3cret']).valid).toBe(false);
    });

    it.each([
      '',
      'sha256=',
      'sha1=757107ea0eb2509fc211221cce984b8a37570b6d',
      HUB_VECTOR.signature.slice(0, -2),
      `${HUB_VECTOR.signature}00`,
      `${HUB_VECTOR.signature.slice(0, -1)}g`,
      ` ${HUB_VECTOR.signature}`,
    ])('refuses the malformed signature %j', (signature) => {
      expect(verifier.verify(request(HUB_VECTOR.body, { 'x-hub-signature-256': signature }), [HUB_VECTOR.secret]).valid).toBe(false);
    });
  });

  describe('X-Gitlab-Token / X-Hostb-Token (second code host)', () => {
    it.each(['x-gitlab-token', 'x-hostb-token'])('compares %s with the secret', (header) => {
      expect(verifier.verify(request('{}', { [header]: 'tok-1' }), ['tok-1'])).toEqual({ valid: true, scheme: 'token' });
      expect(verifier.verify(request('{}', { [header]: 'tok-2' }), ['tok-1'])).toEqual({ valid: false, scheme: 'token' });
      expect(verifier.verify(request('{}', { [header]: 'tok-1x' }), ['tok-1']).valid).toBe(false);
      expect(verifier.verify(request('{}', { [header]: 'tok' }), ['tok-1']).valid).toBe(false);
    });

    it('compares the bytes that were sent with a UTF-8 secret', () => {
      const sentAsLatin1 = Buffer.from('clé-secrète', 'utf8').toString('latin1');
      expect(verifier.verify(request('{}', { 'x-gitlab-token': sentAsLatin1 }), ['clé-secrète']).valid).toBe(true);
    });
  });

  describe('Standard Webhooks', () => {
    const headers = (signature = STANDARD_VECTOR.signature, timestamp = STANDARD_VECTOR.timestamp) => ({
      'webhook-id': STANDARD_VECTOR.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signature,
    });

    it('verifies the published test vector', () => {
      const verifierThen = new WebhookSignatureVerifier(at(STANDARD_VECTOR.timestamp));
      expect(verifierThen.verify(request(STANDARD_VECTOR.body, headers()), [STANDARD_VECTOR.secret])).toEqual({
        valid: true,
        scheme: 'standard-webhooks',
      });
    });

    it('finds the matching entry among several, and ignores other versions', () => {
      const verifierThen = new WebhookSignatureVerifier(at(STANDARD_VECTOR.timestamp));
      const several = `v1a,${STANDARD_VECTOR.signature.slice(3)} v1,bm9wZQ== ${STANDARD_VECTOR.signature}`;
      expect(verifierThen.verify(request(STANDARD_VECTOR.body, headers(several)), [STANDARD_VECTOR.secret]).valid).toBe(true);
      const onlyOthers = `v1a,${STANDARD_VECTOR.signature.slice(3)} v2,${STANDARD_VECTOR.signature.slice(3)}`;
      expect(verifierThen.verify(request(STANDARD_VECTOR.body, headers(onlyOthers)), [STANDARD_VECTOR.secret]).valid).toBe(false);
    });

    it('takes a timestamp up to 5 minutes off either way, and no further', () => {
      const body = STANDARD_VECTOR.body;
      for (const [offset, valid] of [
        [-300, true],
        [300, true],
        [-301, false],
        [301, false],
      ] as const) {
        const verifierThen = new WebhookSignatureVerifier(at(STANDARD_VECTOR.timestamp + offset));
        expect(verifierThen.verify(request(body, headers()), [STANDARD_VECTOR.secret]).valid).toBe(valid);
      }
    });

    it('uses a secret without the whsec_ prefix as its own bytes', () => {
      const body = '{"ok":true}';
      const signature = createHmac('sha256', 'plain-secret').update(`msg_1.1700000000.${body}`).digest('base64');
      const signed = request(body, { 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000', 'webhook-signature': `v1,${signature}` });
      expect(verifier.verify(signed, ['plain-secret']).valid).toBe(true);
    });

    it.each([
      ['no webhook-id', { 'webhook-id': '' }],
      ['no timestamp', { 'webhook-timestamp': '' }],
      ['a timestamp that is not a number', { 'webhook-timestamp': '1614265330.0' }],
      ['a signature of the wrong length', { 'webhook-signature': 'v1,AAAA' }],
      ['a changed id', { 'webhook-id': 'msg_other' }],
    ])('fails with %s', (_name, change) => {
      const verifierThen = new WebhookSignatureVerifier(at(STANDARD_VECTOR.timestamp));
      expect(verifierThen.verify(request(STANDARD_VECTOR.body, { ...headers(), ...change }), [STANDARD_VECTOR.secret]).valid).toBe(false);
    });
  });

  describe('Stripe-Signature', () => {
    const verifierThen = new WebhookSignatureVerifier(at(STRIPE_VECTOR.timestamp + 60));
    const header = (rest: string) => ({ 'stripe-signature': `t=${STRIPE_VECTOR.timestamp},${rest}` });

    it('verifies a v1 signature made by the published algorithm', () => {
      expect(verifierThen.verify(request(STRIPE_VECTOR.body, header(`v1=${STRIPE_VECTOR.v1}`)), [STRIPE_VECTOR.secret])).toEqual({
        valid: true,
        scheme: 'stripe',
      });
    });

    it('finds the matching v1 among several (Stripe signs with old and new secret while rolling)', () => {
      const other = 'ab'.repeat(32);
      expect(
        verifierThen.verify(request(STRIPE_VECTOR.body, header(`v1=${other},v1=${STRIPE_VECTOR.v1},v0=${other}`)), [STRIPE_VECTOR.secret])
          .valid,
      ).toBe(true);
    });

    it('ignores v0 signatures, so a test-mode signature alone never passes', () => {
      expect(verifierThen.verify(request(STRIPE_VECTOR.body, header(`v0=${STRIPE_VECTOR.v1}`)), [STRIPE_VECTOR.secret]).valid).toBe(false);
    });

    it('refuses a timestamp more than 5 minutes away', () => {
      const later = new WebhookSignatureVerifier(at(STRIPE_VECTOR.timestamp + 301));
      expect(later.verify(request(STRIPE_VECTOR.body, header(`v1=${STRIPE_VECTOR.v1}`)), [STRIPE_VECTOR.secret]).valid).toBe(false);
    });

    it('signs the timestamp too: another t fails', () => {
      const signed = request(STRIPE_VECTOR.body, { 'stripe-signature': `t=${STRIPE_VECTOR.timestamp + 1},v1=${STRIPE_VECTOR.v1}` });
      expect(verifierThen.verify(signed, [STRIPE_VECTOR.secret]).valid).toBe(false);
    });
  });

  describe('Authorization: Bearer', () => {
    it('compares the token with the secret', () => {
      expect(verifier.verify(request('{}', { authorization: 'Bearer tok-1' }), ['tok-1'])).toEqual({ valid: true, scheme: 'bearer' });
      expect(verifier.verify(request('{}', { authorization: 'bearer tok-1' }), ['tok-1']).valid).toBe(true);
      expect(verifier.verify(request('{}', { authorization: 'Bearer tok-2' }), ['tok-1']).valid).toBe(false);
      expect(verifier.verify(request('{}', { authorization: 'Basic dG9rLTE=' }), ['tok-1']).valid).toBe(false);
      expect(verifier.verify(request('{}', { authorization: 'Bearer ' }), ['']).valid).toBe(false);
    });
  });

  describe('choosing the scheme', () => {
    it("fails without any scheme's header", () => {
      expect(verifier.verify(request('{}', { 'content-type': 'application/json' }), ['s'])).toEqual({ valid: false, scheme: null });
    });

    it('lets the first scheme whose header is present decide', async () => {
      const both = { 'x-hub-signature-256': 'sha256=' + '0'.repeat(64), authorization: 'Bearer s' };
      expect(verifier.verify(request('{}', both), ['s'])).toEqual({ valid: false, scheme: 'hub-signature-256' });
      const hubAndToken = { 'x-hub-signature-256': await sign('s', '{}'), 'x-gitlab-token': 'wrong' };
      expect(verifier.verify(request('{}', hubAndToken), ['s'])).toEqual({ valid: true, scheme: 'hub-signature-256' });
    });

    it('fails with no secrets at all', () => {
      expect(verifier.verify(request('{}', { authorization: 'Bearer s' }), [])).toEqual({ valid: false, scheme: 'bearer' });
    });
  });

  describe('secret rotation', () => {
    it('accepts any one secret of the list, old or new', async () => {
      const body = '{"rotated":true}';
      const secrets = ['new-secret', 'old-secret'];
      expect(verifier.verify(request(body, { 'x-hub-signature-256': await sign('old-secret', body) }), secrets).valid).toBe(true);
      expect(verifier.verify(request(body, { 'x-hub-signature-256': await sign('new-secret', body) }), secrets).valid).toBe(true);
      expect(verifier.verify(request(body, { 'x-hub-signature-256': await sign('retired', body) }), secrets).valid).toBe(false);
      expect(verifier.verify(request(body, { 'x-gitlab-token': 'old-secret' }), secrets).valid).toBe(true);
      expect(verifier.verify(request(body, { authorization: 'Bearer new-secret' }), secrets).valid).toBe(true);
    });
  });

  it('never throws on odd input', () => {
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const junk = () => Array.from({ length: next() % 120 }, () => String.fromCharCode(next() % 256)).join('');
    const names = [
      'x-hub-signature-256',
      'x-gitlab-token',
      'x-hostb-token',
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
      'stripe-signature',
      'authorization',
    ];
    for (let i = 0; i < 2000; i += 1) {
      const headers: Record<string, string> = {};
      for (const name of names) if (next() % 3 === 0) headers[name] = junk();
      if (next() % 5 === 0) headers['webhook-signature'] = `v1,${junk()} v1,`;
      if (next() % 5 === 0) headers['stripe-signature'] = `t=${junk()},v1=${junk()},=,v1`;
      const body = Buffer.from(junk(), 'latin1');
      const secrets = [junk(), 'whsec_' + junk()];
      expect(() => verifier.verify(request(body, headers), secrets)).not.toThrow();
      expect(verifier.verify(request(body, headers), secrets).valid).toBe(false);
    }
  });
});
