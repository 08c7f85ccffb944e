import { FakeMatrixServer } from '../support/platforms/FakeMatrixServer.js';
import { describePlatformSenderContract } from './PlatformSender.contract.js';

describePlatformSenderContract('MatrixSender', () => FakeMatrixServer.start());
