import { FakeSmtpServer } from '../support/platforms/FakeSmtpServer.js';
import { describePlatformSenderContract } from './PlatformSender.contract.js';

describePlatformSenderContract('EmailSender', () => FakeSmtpServer.start());
