import type { Sql, TransactionSql } from '../db/index.js';

type Db = Sql | TransactionSql;

export interface PhoneNumberRow {
  id: string;
  accountId: string;
  assistantId: string;
  phoneNumber: string;
  provider: 'twilio';
  carrierAccount: string;
  authTokenSealed: string;
  createdAt: Date;
}

const COLUMNS = 'id, account_id, assistant_id, phone_number, provider, carrier_account, auth_token_sealed, created_at';

/** The new row, or undefined when the number is already registered (the unique index said so). */
export async function insertNumber(
  sql: Db,
  row: Omit<PhoneNumberRow, 'createdAt'>,
): Promise<PhoneNumberRow | undefined> {
  const [created] = await sql<PhoneNumberRow[]>`
    insert into phone_numbers (id, account_id, assistant_id, phone_number, provider, carrier_account, auth_token_sealed)
    values (${row.id}, ${row.accountId}, ${row.assistantId}, ${row.phoneNumber}, ${row.provider}, ${row.carrierAccount},
      ${row.authTokenSealed})
    on conflict (provider, phone_number) do nothing
    returning ${sql.unsafe(COLUMNS)}`;
  return created;
}

export async function listNumbers(sql: Db, accountId: string): Promise<PhoneNumberRow[]> {
  return sql<PhoneNumberRow[]>`
    select ${sql.unsafe(COLUMNS)} from phone_numbers where account_id = ${accountId}
    order by created_at desc, id desc limit 100`;
}

export async function findNumber(sql: Db, accountId: string, id: string): Promise<PhoneNumberRow | undefined> {
  const [row] = await sql<PhoneNumberRow[]>`
    select ${sql.unsafe(COLUMNS)} from phone_numbers where id = ${id} and account_id = ${accountId}`;
  return row;
}

export async function deleteNumber(sql: Db, accountId: string, id: string): Promise<boolean> {
  const rows = await sql`delete from phone_numbers where id = ${id} and account_id = ${accountId} returning id`;
  return rows.length > 0;
}

/** Every number registered under a carrier account (the webhook checks its signature with their tokens). */
export async function numbersOfCarrierAccount(
  sql: Db,
  provider: 'twilio',
  carrierAccount: string,
): Promise<PhoneNumberRow[]> {
  return sql<PhoneNumberRow[]>`
    select ${sql.unsafe(COLUMNS)} from phone_numbers
    where provider = ${provider} and carrier_account = ${carrierAccount} limit 1000`;
}

/** The account's registered number with this E.164 value (the `from` of a call Parley places). */
export async function findAccountNumber(
  sql: Db,
  accountId: string,
  phoneNumber: string,
): Promise<PhoneNumberRow | undefined> {
  const [row] = await sql<PhoneNumberRow[]>`
    select ${sql.unsafe(COLUMNS)} from phone_numbers where account_id = ${accountId} and phone_number = ${phoneNumber}
    limit 1`;
  return row;
}

/** A number by id, whoever owns it (a call's callbacks find the number that placed it). */
export async function numberById(sql: Db, id: string): Promise<PhoneNumberRow | undefined> {
  const [row] = await sql<PhoneNumberRow[]>`select ${sql.unsafe(COLUMNS)} from phone_numbers where id = ${id}`;
  return row;
}
