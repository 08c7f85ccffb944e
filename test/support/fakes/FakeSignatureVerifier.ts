import type { SignatureCheck, SignatureVerifier, SignedRequest } from '../../../src/application/ports/SignatureVerifier.js';

/** Valid when the `x-test-signature` header equals one of the secrets; records what it was asked. */
export class FakeSignatureVerifier implements SignatureVerifier {
  readonly checks: Array<{ request: SignedRequest; secrets: readonly string[] }> = [];

  verify(request: SignedRequest, secrets: readonly string[]): SignatureCheck {
    this.checks.push({ request, secrets });
    const sent = request.headers['x-test-signature'];
    if (sent === undefined) return { valid: false, scheme: null };
    return { valid: secrets.includes(sent), scheme: 'bearer' };
  }
}
