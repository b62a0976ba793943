import type { Generated, Kysely } from 'kysely';

type Json = Record<string, unknown>;

export interface EnvironmentRow {
  id: string; name: string; frontend_host: string; settings: Json; allowed_origins: string[];
  /** What a reserved environment is for ('operators'); null for a customer's environment. */
  reserved: string | null;
  created_at: Date; updated_at: Date;
}

export interface SecretKeyRow {
  environment_id: string; id: string; key_hash: Buffer; created_at: Date; revoked_at: Date | null;
  /** The key's last four characters (NULL for keys issued before migration 0025). */
  hint: string | null;
}

/** A user row as a sign-in's statement locks it: enough to start a session only while the user is active. */
export type UserLock = Pick<UserRow, 'environment_id' | 'id' | 'status'>;

export interface UserRow {
  environment_id: string; id: string; email: string | null; email_verified_at: Date | null;
  password_hash: string | null; name: string | null; first_name: string | null; last_name: string | null;
  locale: string | null; status: 'active' | 'banned' | 'deleted';
  registration_state: 'pending_email_verification' | 'complete';
  public_metadata: Json; private_metadata: Json; unsafe_metadata: Json;
  failed_sign_ins: Generated<number>; locked_until: Date | null; last_sign_in_attempt_at: Date | null;
  created_at: Date; updated_at: Date; deleted_at: Date | null;
}

export interface EmailAddressRow {
  environment_id: string; id: string; user_id: string; email: string; is_primary: boolean; verified_at: Date | null;
  released_at: Date | null; code_hash: Buffer | null; code_expires_at: Date | null; code_attempts: Generated<number>; created_at: Date;
}

export interface SessionRow {
  environment_id: string; id: string; user_id: string; token_hash: Buffer; actor: Json | null;
  ip_address: string | null; user_agent: string | null;
  created_at: Date; last_active_at: Date; idle_timeout_seconds: number; expires_at: Date; revoked_at: Date | null;
  authenticated_at: Date | null;
  amr: Generated<string[]>; enrolment_only: Generated<boolean>;
  /** The organization whose claims the session's JWTs carry; a key into the user's membership, cleared when it ends. */
  active_organization_id: string | null;
}

export interface VerificationCodeRow {
  environment_id: string; user_id: string; purpose: 'verify_email' | 'reset_password'; code_hash: Buffer;
  attempts: Generated<number>; created_at: Date; expires_at: Date; used_at: Date | null;
}

export type OutboxStatus = 'caught' | 'pending' | 'sent' | 'failed';

export interface OutboxMessageRow {
  environment_id: string; id: string; to_address: string; subject: string; text_body: string; html_body: string;
  created_at: Date; status: OutboxStatus; attempts: Generated<number>; next_attempt_at: Date | null;
  last_error: string | null; finished_at: Date | null;
}

export interface RateLimitWindowRow {
  environment_id: string; bucket: string; window_start: Date; count: number;
}

export type InvitationStatus = 'PENDING' | 'ACCEPTED' | 'REVOKED' | 'EXPIRED';

export interface InvitationRow {
  environment_id: string; id: string; email: string; status: InvitationStatus; token_hash: Buffer;
  redirect_url: string | null; public_metadata: Json; private_metadata: Json;
  expires_at: Date; created_at: Date; updated_at: Date; accepted_at: Date | null; revoked_at: Date | null;
  accepted_user_id: string | null;
}

export interface AuditSequenceRow {
  environment_id: string; last_sequence: number;
}

export interface AuditEventRow {
  environment_id: string; id: string; sequence: number; action: string; result: string;
  occurred_at: Date; recorded_at: Date; actor_type: string; actor_id: string | null; actor_impersonator_id: string | null;
  targets: { type: string; id: string | null }[]; ip_address: string | null; user_agent: string | null;
  producer: Json; metadata: Json; schema_version: number; correlation_id: string | null;
}

export interface AuditIdempotencyKeyRow {
  environment_id: string; idempotency_key: string; request_hash: Buffer; event_id: string; created_at: Date;
}

export interface OrganizationRow {
  environment_id: string; id: string; name: string; slug: string | null; role_set_id: string | null;
  public_metadata: Json; private_metadata: Json; created_at: Date; updated_at: Date;
}

export interface OrganizationRoleSetRow {
  environment_id: string; id: string; name: string; roles: { key: string; name: string; permissions?: string[] }[]; created_at: Date;
}

export interface OrganizationMembershipRow {
  environment_id: string; organization_id: string; user_id: string; role: string; role_name: string | null;
  public_metadata: Json; private_metadata: Json; created_at: Date; updated_at: Date;
}

export interface OrganizationInvitationRow {
  environment_id: string; id: string; organization_id: string; email: string; role: string; status: InvitationStatus;
  token_hash: Buffer; inviter_user_id: string | null; expires_at: Date; created_at: Date; updated_at: Date;
  accepted_at: Date | null; accepted_user_id: string | null; revoked_at: Date | null;
}

export type DomainEnrollment = 'none' | 'suggest' | 'automatic';
export interface OrganizationDomainRow {
  environment_id: string; id: string; organization_id: string; domain: string; enrollment: Generated<DomainEnrollment>;
  verification_token: string; verified_at: Date | null; created_at: Date; updated_at: Date;
}

export interface ImpersonationRow {
  environment_id: string; id: string; token_hash: Buffer; actor_user_id: string | null; actor_operator_id: string | null;
  target_user_id: string; reason: string; landing_url: string | null; month: string; created_at: Date; expires_at: Date;
  redeemed_at: Date | null; redeemed_ip: string | null; redeemed_user_agent: string | null; session_id: string | null; revoked_at: Date | null;
}

export interface ImpersonationUsageRow {
  environment_id: string; month: string; used: number;
}

export interface SigningKeyRow {
  environment_id: string; id: string; public_jwk: Json; private_key_sealed: Buffer; created_at: Date;
  retired_at: Date | null; published_until: Date | null; revoked_at: Date | null;
}

export interface OAuthProviderRow {
  environment_id: string; id: string; type: string; name: string; client_id: string; client_secret_sealed: Buffer;
  issuer: string | null; authorization_url: string | null; token_url: string | null; user_info_url: string | null;
  scopes: string[]; enabled: boolean; created_at: Date; updated_at: Date;
}

export interface OAuthStateRow {
  environment_id: string; state_hash: Buffer; provider_id: string; browser_hash: Buffer; secrets_sealed: Buffer;
  redirect_url: string; created_at: Date; expires_at: Date; used_at: Date | null;
}

export interface UserIdentityRow {
  environment_id: string; id: string; user_id: string; provider_id: string; subject: string; email: string | null;
  email_verified: boolean; created_at: Date; last_sign_in_at: Date;
}

export interface MfaFactorRow {
  environment_id: string; id: string; user_id: string; type: 'totp'; name: string; secret_sealed: Buffer;
  created_at: Date; confirmed_at: Date | null; last_used_at: Date | null; last_used_step: number | null;
}

export interface MfaBackupCodeRow {
  environment_id: string; user_id: string; code_hash: Buffer; created_at: Date; used_at: Date | null;
}

export interface MfaChallengeRow {
  environment_id: string; token_hash: Buffer; user_id: string; method: string; details: Json;
  attempts: Generated<number>; created_at: Date; expires_at: Date; used_at: Date | null;
}

export type JobStatus = 'queued' | 'done' | 'failed';

export interface JobRow {
  environment_id: string; id: string; kind: string; payload: Json; status: JobStatus; run_at: Date;
  attempts: Generated<number>; max_attempts: number; locked_until: Date | null; created_at: Date;
  finished_at: Date | null; last_error: string | null; ordering_key: string | null; seq: Generated<number>;
}

export interface WebhookEndpointRow {
  environment_id: string; id: string; url: string; description: string | null; event_types: string[] | null;
  enabled: boolean; disabled_reason: 'manual' | 'failing' | null; secret_sealed: Buffer; previous_secret_sealed: Buffer | null;
  previous_secret_expires_at: Date | null; failing_since: Date | null; created_at: Date; updated_at: Date;
}

export interface WebhookEventRow { environment_id: string; id: string; type: string; data: Json; occurred_at: Date }

export type WebhookDeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDeliveryRow {
  environment_id: string; id: string; endpoint_id: string; event_id: string; job_id: string; status: WebhookDeliveryStatus;
  attempts: Generated<number>; next_attempt_at: Date | null; last_response_status: number | null; last_error: string | null;
  created_at: Date; finished_at: Date | null;
}

export interface WebhookAttemptRow {
  environment_id: string; delivery_id: string; attempt: number; started_at: Date; duration_ms: number;
  response_status: number | null; response_body: string | null; error: string | null;
}

export interface WebhookEventSourceRow { action: string; type: string; method: Generated<string>; position: Generated<number> }

export type DataRequestType = 'export' | 'erasure';
export type DataRequestStatus = 'pending' | 'ready' | 'scheduled' | 'completed' | 'cancelled';

export interface DataRequestRow {
  environment_id: string; id: string; user_id: string; type: DataRequestType; status: DataRequestStatus;
  requested_by: Json; created_at: Date; updated_at: Date; completes_at: Date | null; ready_at: Date | null;
  expires_at: Date | null; completed_at: Date | null; cancelled_at: Date | null; cancel_reason: string | null;
  archive: Json | null; job_id: string;
}

export interface PasskeyRow {
  environment_id: string; id: string; user_id: string; credential_id: string; public_key: Buffer;
  counter: Generated<number>; transports: Generated<string[]>; device_type: 'singleDevice' | 'multiDevice'; backed_up: boolean;
  aaguid: string; rp_id: string; name: string; created_at: Date; last_used_at: Date | null;
}

export interface PasskeyChallengeRow {
  environment_id: string; challenge_hash: Buffer; purpose: 'registration' | 'authentication'; user_id: string | null;
  restricted: Generated<boolean>; created_at: Date; expires_at: Date; used_at: Date | null;
}

export interface OperatorPasswordTokenRow {
  environment_id: string; id: string; user_id: string; token_hash: Buffer; created_at: Date; expires_at: Date; used_at: Date | null;
}

export interface Tables {
  environments: EnvironmentRow;
  secret_keys: SecretKeyRow;
  users: UserRow;
  email_addresses: EmailAddressRow;
  sessions: SessionRow;
  verification_codes: VerificationCodeRow;
  outbox_messages: OutboxMessageRow;
  rate_limit_windows: RateLimitWindowRow;
  invitations: InvitationRow;
  audit_sequences: AuditSequenceRow;
  audit_events: AuditEventRow;
  audit_idempotency_keys: AuditIdempotencyKeyRow;
  organization_role_sets: OrganizationRoleSetRow;
  organizations: OrganizationRow;
  organization_memberships: OrganizationMembershipRow;
  organization_invitations: OrganizationInvitationRow;
  organization_domains: OrganizationDomainRow;
  impersonations: ImpersonationRow;
  impersonation_usage: ImpersonationUsageRow;
  signing_keys: SigningKeyRow;
  oauth_providers: OAuthProviderRow;
  oauth_states: OAuthStateRow;
  user_identities: UserIdentityRow;
  mfa_factors: MfaFactorRow;
  mfa_backup_codes: MfaBackupCodeRow;
  mfa_challenges: MfaChallengeRow;
  jobs: JobRow;
  webhook_endpoints: WebhookEndpointRow;
  webhook_events: WebhookEventRow;
  webhook_deliveries: WebhookDeliveryRow;
  webhook_attempts: WebhookAttemptRow;
  webhook_event_sources: WebhookEventSourceRow;
  data_requests: DataRequestRow;
  passkeys: PasskeyRow;
  passkey_challenges: PasskeyChallengeRow;
  operator_password_tokens: OperatorPasswordTokenRow;
}

/** The database, typed by its tables: the connection pool, or a transaction over it. */
export type Db = Kysely<Tables>;
