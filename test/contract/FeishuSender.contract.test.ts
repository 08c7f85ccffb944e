import { FakeFeishuServer } from '../support/platforms/FakeFeishuServer.js';
import { describePlatformSenderContract } from './PlatformSender.contract.js';

describePlatformSenderContract('FeishuSender', () => FakeFeishuServer.start());
