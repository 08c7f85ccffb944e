import { FakeBlueBubblesServer } from '../support/platforms/FakeBlueBubblesServer.js';
import { describePlatformSenderContract } from './PlatformSender.contract.js';

describePlatformSenderContract('BlueBubblesSender', () => FakeBlueBubblesServer.start());
