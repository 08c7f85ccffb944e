import type { RunOutputStore } from '../../src/application/ports/RunOutputStore.js';

export interface RunOutputStoreSubject {
  store: RunOutputStore;
  cleanup?: () => Promise<void>;
}

const JOB = 'a1b2c3d4e5f6';
const reportName = (minute: number) => `2026-03-01_12-${String(minute).padStart(2, '0')}-00.md`;

/** What every RunOutputStore promises about saving, listing and reading reports; each test gets a fresh store. */
export function describeRunOutputStoreContract(name: string, makeSubject: () => Promise<RunOutputStoreSubject>): void {
  describe(`${name} (RunOutputStore contract)`, () => {
    let subject: RunOutputStoreSubject;

    beforeEach(async () => {
      subject = await makeSubject();
    });

    afterEach(async () => {
      await subject.cleanup?.();
    });

    it('lists nothing and reads null for a job without reports', async () => {
      expect(await subject.store.list(JOB)).toEqual([]);
      expect(await subject.store.read(JOB, reportName(1))).toBeNull();
    });

    it('lists the reports newest first and reads each back as it was saved', async () => {
      for (const minute of [2, 1, 3]) await subject.store.save(JOB, reportName(minute), `run ${minute}\n`, 50);

      expect(await subject.store.list(JOB)).toEqual([reportName(3), reportName(2), reportName(1)]);
      expect(await subject.store.read(JOB, reportName(2))).toMatchObject({ fileName: reportName(2), content: 'run 2\n' });
      expect(await subject.store.list('other0000000')).toEqual([]);
    });

    it('lists only the reports kept, and none after removeAll', async () => {
      for (const minute of [1, 2, 3]) await subject.store.save(JOB, reportName(minute), 'x', 2);
      expect(await subject.store.list(JOB)).toEqual([reportName(3), reportName(2)]);

      await subject.store.removeAll(JOB);
      expect(await subject.store.list(JOB)).toEqual([]);
    });
  });
}
