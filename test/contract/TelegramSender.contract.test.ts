import { FakeTelegramServer } from '../support/platforms/FakeTelegramServer.js';
import { describePlatformSenderContract } from './PlatformSender.contract.js';

describePlatformSenderContract('TelegramSender', () => FakeTelegramServer.start());
