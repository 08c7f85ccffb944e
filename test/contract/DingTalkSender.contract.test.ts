import { FakeDingTalkServer } from '../support/platforms/FakeDingTalkServer.js';
import { describePlatformSenderContract } from './PlatformSender.contract.js';

describePlatformSenderContract('DingTalkSender over the open API', () => FakeDingTalkServer.start('open_api'));
describePlatformSenderContract('DingTalkSender over a robot webhook', () => FakeDingTalkServer.start('webhook'));
