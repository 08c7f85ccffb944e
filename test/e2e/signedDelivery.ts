import { sign } from '@octokit/webhooks-methods';

/** POSTs `payload` to the `route` (default `github`) on 127.0.0.1:`port` as a code host sends a pull_request event, signed with `secret`. */
export async function postPullRequestEvent(
  port: number,
  secret: string,
  delivery: string,
  payload: object,
  route = 'github',
): Promise<Response> {
  const body = JSON.stringify(payload);
  return fetch(`http://127.0.0.1:${port}/webhooks/${route}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-github-delivery': delivery,
      'x-hub-signature-256': await sign(secret, body),
    },
    body,
  });
}
