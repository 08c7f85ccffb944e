import { FakeTwilioServer } from '../support/platforms/FakeTwilioServer.js';
import { describePlatformSenderContract } from './PlatformSender.contract.js';

describePlatformSenderContract('TwilioSmsSender', () => FakeTwilioServer.start());
