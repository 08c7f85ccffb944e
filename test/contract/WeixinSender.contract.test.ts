import { FakeWeixinServer } from '../support/platforms/FakeWeixinServer.js';
import { describePlatformSenderContract } from './PlatformSender.contract.js';

describePlatformSenderContract('WeixinSender', () => FakeWeixinServer.start());
