type Json = Record<string, unknown>;

/** The rows of migration 0033, joined to the database's table types by declaration merging (as scim/tables.ts). */
export interface SsoConnectionRow {
  environment_id: string; id: string; organization_id: string; type: 'saml' | 'oidc'; name: string; enabled: boolean; enforced: boolean;
  groups_attribute: string; group_roles: Json;
  idp_entity_id: string | null; idp_sso_url: string | null; idp_certificates: string[] | null; idp_metadata_url: string | null;
  issuer: string | null; client_id: string | null; client_secret_sealed: Buffer | null; scopes: string[] | null;
  created_at: Date; updated_at: Date;
}
export interface SsoRequestRow {
  environment_id: string; key_hash: Buffer; connection_id: string; browser_hash: Buffer; redirect_url: string;
  secrets_sealed: Buffer | null; created_at: Date; expires_at: Date;
}
export interface SsoUsedAssertionRow { environment_id: string; connection_id: string; assertion_id: string; expires_at: Date }
export interface SsoIdentityRow {
  environment_id: string; connection_id: string; subject: string; user_id: string; created_at: Date; last_sign_in_at: Date;
}

declare module '../platform/db/tables.js' {
  interface Tables {
    sso_connections: SsoConnectionRow;
    sso_requests: SsoRequestRow;
    sso_used_assertions: SsoUsedAssertionRow;
    sso_identities: SsoIdentityRow;
  }
}
