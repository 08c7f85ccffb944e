import { FakeWecomServer } from '../support/platforms/FakeWecomServer.js';
import { describePlatformSenderContract } from './PlatformSender.contract.js';

describePlatformSenderContract('WecomSender', () => FakeWecomServer.start());
