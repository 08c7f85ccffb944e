import { messageFor } from '../../../src/adapters/cli/errorReport.js';
import { DeliveryError } from '../../../src/application/ports/DeliveryChannel.js';

describe('the error sentence on stderr', () => {
  it('escapes the control characters a platform put in an error, so they never reach the terminal', () => {
    const error = new DeliveryError('telegram refused the message (HTTP 400: \u001b]0;pwned\u0007\u001b[31mred\u0000)');

    expect(messageFor(error, false)).toBe('error: telegram refused the message (HTTP 400: \\u001b]0;pwned\\u0007\\u001b[31mred\\u0000)');
  });

  it('escapes them in an unexpected error too, and keeps the stack trace on its own lines with --debug', () => {
    const error = new Error('bad \u001b[2J answer');

    const message = messageFor(error, true);

    expect(message).toMatch(
      /^error: something unexpected went wrong: bad \\u001b\[2J answer \(run again with --debug for details\)\.\nError: bad \\u001b\[2J answer\n {4}at /,
    );
    expect(message).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  });
});
