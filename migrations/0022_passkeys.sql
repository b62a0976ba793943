-- Passkeys (issue 26): discoverable WebAuthn credentials of users, and the single-use challenges of their
-- registration and sign-in ceremonies. Every key leads with the environment.

CREATE TABLE passkeys (
  environment_id uuid NOT NULL,
  id uuid NOT NULL,
  user_id uuid NOT NULL,
  -- The credential id as the authenticator gave it (base64url); an assertion names it.
  credential_id text NOT NULL,
  -- The COSE public key: public, so kept as it is.
  public_key bytea NOT NULL,
  -- The authenticator's signature counter; an assertion with a lower one (when non-zero) is a cloned key.
  counter bigint NOT NULL DEFAULT 0,
  transports text[] NOT NULL DEFAULT '{}',
  -- singleDevice (bound to one authenticator) or multiDevice (backup eligible, synced): hwk or swk in amr.
  device_type text NOT NULL CHECK (device_type IN ('singleDevice', 'multiDevice')),
  backed_up boolean NOT NULL,
  aaguid text NOT NULL,
  -- The RP ID the credential is scoped to: a frontend host moved to another domain leaves it unusable.
  rp_id text NOT NULL,
  name text NOT NULL,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz,
  PRIMARY KEY (environment_id, id),
  UNIQUE (environment_id, credential_id),
  FOREIGN KEY (environment_id, user_id) REFERENCES users (environment_id, id)
);
CREATE INDEX passkeys_by_user ON passkeys (environment_id, user_id);

CREATE TABLE passkey_challenges (
  environment_id uuid NOT NULL,
  -- SHA-256 of the challenge the ceremony signs: the client sends it back inside clientDataJSON.
  challenge_hash bytea NOT NULL,
  purpose text NOT NULL CHECK (purpose IN ('registration', 'authentication')),
  -- Registration: the signed-in user. Authentication: the account an email named, when it named one.
  user_id uuid,
  -- Authentication with an email: only that account's passkey may answer (none, when the email is unknown).
  restricted boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  PRIMARY KEY (environment_id, challenge_hash),
  FOREIGN KEY (environment_id, user_id) REFERENCES users (environment_id, id)
);
CREATE INDEX passkey_challenges_expiry ON passkey_challenges (expires_at);
