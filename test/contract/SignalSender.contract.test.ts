import { FakeSignalCliServer } from '../support/platforms/FakeSignalCliServer.js';
import { describePlatformSenderContract } from './PlatformSender.contract.js';

describePlatformSenderContract('SignalSender', () => FakeSignalCliServer.start());
