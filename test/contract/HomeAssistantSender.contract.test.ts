import { FakeHomeAssistantServer } from '../support/platforms/FakeHomeAssistantServer.js';
import { describePlatformSenderContract } from './PlatformSender.contract.js';

describePlatformSenderContract('HomeAssistantSender', () => FakeHomeAssistantServer.start());
