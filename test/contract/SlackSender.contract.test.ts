import { FakeSlackServer } from '../support/platforms/FakeSlackServer.js';
import { describePlatformSenderContract } from './PlatformSender.contract.js';

describePlatformSenderContract('SlackSender', () => FakeSlackServer.start());
