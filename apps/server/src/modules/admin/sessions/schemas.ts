import { Type, type Static } from 'typebox';
import { stringEnum, constant, always, refTo } from '../../../http/common.js';
import { ADMIN_ROLES, PERMISSION_NAMES } from '../shared/permissions.js';
import { ADMIN_LIVEMODE } from '../shared/schemas.js';

export const AdminLoginRequest = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254, description: 'The admin user\'s email (case-insensitive).' }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { $id: 'AdminLoginRequest', additionalProperties: false, examples: [{ email: 'ops@example.com', password: 'correct horse battery staple' }] },
);
export type AdminLoginRequest = Static<typeof AdminLoginRequest>;

export const AdminUser = Type.Object(
  {
    id: Type.String({ description: 'Prefix `adm_`.' }),
    email: Type.String(),
    role: stringEnum([...ADMIN_ROLES], { description: '`admin` manages; `viewer` only reads.' }),
  },
  { $id: 'AdminUser', additionalProperties: false, description: 'The admin user signed in.' },
);

export const AdminSession = Type.Object(
  {
    object: constant('admin_session'),
    admin: refTo(AdminUser),
    permissions: Type.Array(stringEnum([...PERMISSION_NAMES]), { description: 'What this role may do, as `resource:verb` (e.g. `split_rules:update`). The server enforces them (PERMISSION_DENIED); the back office shows only what they allow.' }),
    csrfToken: Type.String({ description: 'Send it as `X-CSRF-Token` on every POST, PATCH, PUT and DELETE under /admin.' }),
    expiresAt: Type.String({ format: 'date-time', description: 'When the session ends (absolute; 8 hours after sign-in by default).' }),
    livemode: ADMIN_LIVEMODE,
  },
  { $id: 'AdminSession', additionalProperties: false, description: 'An admin session. The session id itself only travels in the HttpOnly `admin_session` cookie.' },
);
export type AdminSession = Static<typeof AdminSession>;

export const AdminSessionEnded = Type.Object(
  { object: constant('admin_session'), deleted: always(true), livemode: ADMIN_LIVEMODE },
  { $id: 'AdminSessionEnded', additionalProperties: false, description: 'The session was ended.' },
);


export const AdminSessionStatus = Type.Object(
  {
    object: constant('admin_session_status'),
    livemode: ADMIN_LIVEMODE,
    signedIn: Type.Boolean(),
    session: Type.Union([Type.Unsafe<AdminSession>({ $ref: 'AdminSession' }), Type.Null()], { description: 'The session (as GET /admin/session answers it), or null.' }),
  },
  { $id: 'AdminSessionStatus', additionalProperties: false, description: 'Whether an admin session is signed in, and if so the session.' },
);
