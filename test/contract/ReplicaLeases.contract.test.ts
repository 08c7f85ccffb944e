import { PostgresReplicaLeases } from '../../src/adapters/postgres/PostgresReplicaLeases.js';
import { InMemoryReplicaLeases } from '../support/fakes/InMemoryReplicaLeases.js';
import { scratchDatabaseForSuite } from '../support/postgres.js';
import { describeReplicaLeasesContract } from './ReplicaLeases.contract.js';

describeReplicaLeasesContract('InMemoryReplicaLeases', async () => new InMemoryReplicaLeases());

describe('on PostgreSQL', () => {
  const suite = scratchDatabaseForSuite();

  describeReplicaLeasesContract('PostgresReplicaLeases', async () => {
    await suite.database.query('TRUNCATE agent_gateways');
    return new PostgresReplicaLeases(suite.database);
  });
});
