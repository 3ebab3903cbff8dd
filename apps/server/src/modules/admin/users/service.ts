import { ApiError } from '../../../errors.js';
import { newId } from '../../../domain/ids.js';
import { isUniqueViolation, type Store } from '../../../store/index.js';
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../shared/passwords.js';
import { ADMIN_ROLES, isAdminRole, type AdminRole } from '../shared/permissions.js';

// Admin users exist only when someone creates them from the command line
// (`admin:create --email E [--role admin|viewer]`, the password asked for or piped in): there is no default user and no
// default password. The role is `admin` (manages) unless `viewer` (reads only) is asked for.

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const MAX_EMAIL_LENGTH = 254;

// Emails compare case-insensitively: stored and looked up trimmed and lower-cased.
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function checkEmail(email: string): string {
  const normalized = normalizeEmail(email);
  if (normalized.length === 0 || normalized.length > MAX_EMAIL_LENGTH || !EMAIL.test(normalized)) {
    throw new ApiError('VALIDATION_ERROR', 'email must be a valid email address.', { param: 'email' });
  }
  return normalized;
}

export function checkPassword(password: string): void {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) {
    throw new ApiError('VALIDATION_ERROR', `password must have at least ${MIN_PASSWORD_LENGTH} characters.`, { param: 'password' });
  }
  if (length > MAX_PASSWORD_LENGTH) {
    throw new ApiError('VALIDATION_ERROR', `password must have at most ${MAX_PASSWORD_LENGTH} characters.`, { param: 'password' });
  }
}

export async function createAdminUser(store: Store, email: string, password: string, role: AdminRole = 'admin'): Promise<{ id: string; email: string; role: AdminRole }> {
  if (!isAdminRole(role)) throw new ApiError('VALIDATION_ERROR', `role must be one of ${ADMIN_ROLES.join(', ')}.`, { param: 'role' });
  if (typeof email !== 'string') throw new ApiError('VALIDATION_ERROR', 'email is required.', { param: 'email' });
  if (typeof password !== 'string') throw new ApiError('VALIDATION_ERROR', 'password is required.', { param: 'password' });
  const normalized = checkEmail(email);
  checkPassword(password);
  const duplicate = () => new ApiError('VALIDATION_ERROR', 'An admin user with this email already exists.', { param: 'email' });
  const existing = await store.db.selectFrom('admin_users').select('id').where('email', '=', normalized).executeTakeFirst();
  if (existing) throw duplicate();
  const passwordHash = await hashPassword(password);
  const nowMs = store.clock.nowMs();
  const id = newId('admin', nowMs);
  try {
    await store.write((tx) => tx.insertInto('admin_users').values({
      id,
      email: normalized,
      password_hash: passwordHash,
      role,
      created_at: new Date(nowMs).toISOString(),
    }).execute());
  } catch (error) {
    // Two creations racing for one email: the unique index decides.
    if (isUniqueViolation(error)) throw duplicate();
    throw error;
  }
  return { id, email: normalized, role };
}
