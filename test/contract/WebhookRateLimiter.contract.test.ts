import 'reflect-metadata';
import { InMemoryWebhookRateLimiter } from '../../src/adapters/webhook/InMemoryWebhookRateLimiter.js';
import { describeWebhookRateLimiterContract } from './WebhookRateLimiter.contract.js';

describeWebhookRateLimiterContract('InMemoryWebhookRateLimiter', async () => ({ limiter: new InMemoryWebhookRateLimiter() }));
