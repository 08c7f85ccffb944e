import { FakeQqBotServer } from '../support/platforms/FakeQqBotServer.js';
import { describePlatformSenderContract } from './PlatformSender.contract.js';

describePlatformSenderContract('QqBotSender', () => FakeQqBotServer.start());
