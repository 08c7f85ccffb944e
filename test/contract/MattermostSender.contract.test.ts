import { FakeMattermostServer } from '../support/platforms/FakeMattermostServer.js';
import { describePlatformSenderContract } from './PlatformSender.contract.js';

describePlatformSenderContract('MattermostSender', () => FakeMattermostServer.start());
