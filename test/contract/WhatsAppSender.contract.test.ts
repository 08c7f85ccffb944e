import { FakeWhatsAppServer } from '../support/platforms/FakeWhatsAppServer.js';
import { describePlatformSenderContract } from './PlatformSender.contract.js';

describePlatformSenderContract('WhatsAppSender', () => FakeWhatsAppServer.start());
