/** The one-row table of the master secret's check value. */
import type { SecretCheckRepository } from '../types.ts';
import type { Db } from './tables.ts';

export function sqlSecretCheck(db: Db): SecretCheckRepository {
  return {
    async get() {
      const row = await db.selectFrom('secret_check').select('sealed').where('id', '=', 1).executeTakeFirst();
      return row?.sealed;
    },
    async put(sealed, replacing) {
      if (replacing === undefined) {
        const result = await db.insertInto('secret_check').values({ id: 1, sealed }).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst();
        return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
      }
      const result = await db.updateTable('secret_check').set({ sealed, updated_at: new Date() })
        .where('id', '=', 1).where('sealed', '=', replacing).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}
