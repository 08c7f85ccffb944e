import { FakeDiscordServer } from '../support/platforms/FakeDiscordServer.js';
import { describePlatformSenderContract } from './PlatformSender.contract.js';

describePlatformSenderContract('DiscordSender', () => FakeDiscordServer.start());
