// Generated from openapi.json by npm run openapi (scripts/sdk-sources.ts). Do not edit.
/** The JSON Schema of an environment's settings (EnvironmentSettings), as `updateEnvironment` validates them; generate a settings form from it. */
export const environmentSettingsSchema = {
  "type": "object",
  "required": [
    "signUpUrl",
    "invitationAcceptUrl",
    "impersonationLandingUrl",
    "impersonationEnabled",
    "impersonationSessionLifetimeSeconds",
    "plan",
    "requiredFields",
    "passwordPolicy",
    "invitationRateLimitPerHour",
    "auditLogEnabled",
    "auditRetentionDays",
    "emailVerificationRequired",
    "dataErasureGraceDays",
    "enumerationProtection",
    "oauthLinkVerifiedEmails",
    "selfDeletionEnabled",
    "mfa",
    "passkeys",
    "session",
    "lockout",
    "hostedPages"
  ],
  "properties": {
    "signUpUrl": {
      "anyOf": [
        {
          "type": "string",
          "format": "uri",
          "maxLength": 2048,
          "description": "Your sign-up page, linked from environment invitation mails; null links to the hosted pages while they are on."
        },
        {
          "type": "null"
        }
      ]
    },
    "invitationAcceptUrl": {
      "anyOf": [
        {
          "type": "string",
          "format": "uri",
          "maxLength": 2048,
          "description": "Your page that accepts organization invitations; null links to the hosted pages while they are on."
        },
        {
          "type": "null"
        }
      ]
    },
    "impersonationLandingUrl": {
      "anyOf": [
        {
          "type": "string",
          "format": "uri",
          "maxLength": 2048,
          "description": "Where an impersonation link lands in your app."
        },
        {
          "type": "null"
        }
      ]
    },
    "impersonationEnabled": {
      "type": "boolean",
      "description": "Whether operators and support staff may impersonate users."
    },
    "impersonationSessionLifetimeSeconds": {
      "type": "integer",
      "minimum": 60,
      "maximum": 86400,
      "description": "How long an impersonation session lasts, in seconds."
    },
    "plan": {
      "type": "object",
      "required": [
        "impersonation",
        "impersonationQuotaPerMonth"
      ],
      "properties": {
        "impersonation": {
          "type": "boolean",
          "description": "Whether the plan includes impersonation."
        },
        "impersonationQuotaPerMonth": {
          "type": "integer",
          "minimum": 0,
          "maximum": 1000000,
          "description": "Impersonations allowed per calendar month, shared with the dashboard."
        }
      },
      "additionalProperties": false,
      "description": "What the environment's plan includes."
    },
    "requiredFields": {
      "type": "array",
      "items": {
        "anyOf": [
          {
            "type": "string",
            "enum": [
              "email"
            ]
          },
          {
            "type": "string",
            "enum": [
              "name"
            ]
          }
        ]
      },
      "uniqueItems": true,
      "description": "The fields a user must give to sign up."
    },
    "passwordPolicy": {
      "type": "object",
      "required": [
        "minLength",
        "maxLength"
      ],
      "properties": {
        "minLength": {
          "type": "integer",
          "minimum": 8,
          "maximum": 256,
          "description": "Fewest characters a password may have."
        },
        "maxLength": {
          "type": "integer",
          "minimum": 8,
          "maximum": 256,
          "description": "Most characters a password may have."
        }
      },
      "additionalProperties": false,
      "description": "Password length rules, for users and operators alike."
    },
    "invitationRateLimitPerHour": {
      "type": "integer",
      "minimum": 0,
      "maximum": 1000000,
      "description": "Invitations the environment may send per hour."
    },
    "auditLogEnabled": {
      "type": "boolean",
      "description": "Whether the environment records audit events."
    },
    "auditRetentionDays": {
      "anyOf": [
        {
          "type": "integer",
          "minimum": 7,
          "maximum": 36500,
          "description": "Days audit events are kept; null keeps them for good."
        },
        {
          "type": "null"
        }
      ]
    },
    "emailVerificationRequired": {
      "type": "boolean",
      "description": "Whether a new user must verify their email address before signing in."
    },
    "dataErasureGraceDays": {
      "type": "integer",
      "minimum": 0,
      "maximum": 365,
      "description": "Days an erasure request waits (and can be cancelled) before it runs; 0 runs it at once."
    },
    "enumerationProtection": {
      "type": "boolean",
      "description": "Answer sign-in, sign-up and reset the same way whether or not the email is known."
    },
    "oauthLinkVerifiedEmails": {
      "type": "boolean",
      "description": "Link an external sign-in to the user with the same verified email."
    },
    "selfDeletionEnabled": {
      "type": "boolean",
      "description": "Whether users may delete their own account."
    },
    "mfa": {
      "type": "object",
      "required": [
        "policy"
      ],
      "properties": {
        "policy": {
          "anyOf": [
            {
              "type": "string",
              "enum": [
                "off"
              ]
            },
            {
              "type": "string",
              "enum": [
                "optional"
              ]
            },
            {
              "type": "string",
              "enum": [
                "required"
              ]
            }
          ],
          "description": "off: no second factors; optional: users may enrol one; required: every user must."
        }
      },
      "additionalProperties": false,
      "description": "Second factors (TOTP and backup codes)."
    },
    "passkeys": {
      "type": "object",
      "required": [
        "enabled",
        "rpId"
      ],
      "properties": {
        "enabled": {
          "type": "boolean",
          "description": "Whether users may sign in with passkeys."
        },
        "rpId": {
          "anyOf": [
            {
              "type": "string",
              "maxLength": 253,
              "pattern": "^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$",
              "description": "The WebAuthn RP ID when it is not the frontend host's name: that name or a parent domain of it (example.com for auth.example.com)."
            },
            {
              "type": "null"
            }
          ]
        }
      },
      "additionalProperties": false,
      "description": "Passkeys (WebAuthn)."
    },
    "session": {
      "type": "object",
      "required": [
        "idleTimeoutSeconds",
        "maxLifetimeSeconds",
        "jwtLifetimeSeconds",
        "jwtAudience"
      ],
      "properties": {
        "idleTimeoutSeconds": {
          "type": "integer",
          "minimum": 1,
          "maximum": 315360000,
          "description": "A session ends after this many seconds without use."
        },
        "maxLifetimeSeconds": {
          "type": "integer",
          "minimum": 1,
          "maximum": 315360000,
          "description": "A session ends this many seconds after it started, used or not."
        },
        "jwtLifetimeSeconds": {
          "type": "integer",
          "minimum": 1,
          "maximum": 3600,
          "description": "How long a session JWT is valid, in seconds."
        },
        "jwtAudience": {
          "anyOf": [
            {
              "type": "string",
              "minLength": 1,
              "maxLength": 256,
              "description": "The aud of the session JWTs (the API they are meant for); null leaves it out."
            },
            {
              "type": "null"
            }
          ]
        }
      },
      "additionalProperties": false,
      "description": "Session lifetimes and JWTs."
    },
    "lockout": {
      "type": "object",
      "required": [
        "maxFailedAttempts",
        "coolDownSeconds",
        "ipMaxFailures",
        "ipWindowSeconds"
      ],
      "properties": {
        "maxFailedAttempts": {
          "type": "integer",
          "minimum": 1,
          "maximum": 1000000,
          "description": "Wrong passwords in a row that lock an account."
        },
        "coolDownSeconds": {
          "type": "integer",
          "minimum": 1,
          "maximum": 315360000,
          "description": "How long a locked account stays locked, in seconds."
        },
        "ipMaxFailures": {
          "type": "integer",
          "minimum": 1,
          "maximum": 1000000,
          "description": "Failed sign-ins from one IP address within the window that block it."
        },
        "ipWindowSeconds": {
          "type": "integer",
          "minimum": 1,
          "maximum": 86400,
          "description": "The window, in seconds, the IP address failures are counted in."
        }
      },
      "additionalProperties": false,
      "description": "Lockout after failed sign-ins."
    },
    "hostedPages": {
      "type": "object",
      "required": [
        "enabled",
        "afterSignInUrl",
        "afterSignOutUrl",
        "termsUrl",
        "branding"
      ],
      "properties": {
        "enabled": {
          "type": "boolean",
          "description": "Whether Gatehouse serves its sign-in, sign-up and account pages on the frontend host."
        },
        "afterSignInUrl": {
          "anyOf": [
            {
              "type": "string",
              "format": "uri",
              "maxLength": 2048,
              "description": "Where a page sends the browser after a sign-in when the link names no redirect_url; null shows a \"signed in\" page."
            },
            {
              "type": "null"
            }
          ]
        },
        "afterSignOutUrl": {
          "anyOf": [
            {
              "type": "string",
              "format": "uri",
              "maxLength": 2048,
              "description": "Where /sign-out sends the browser; null sends it to /sign-in."
            },
            {
              "type": "null"
            }
          ]
        },
        "termsUrl": {
          "anyOf": [
            {
              "type": "string",
              "format": "uri",
              "maxLength": 2048,
              "description": "The terms a visitor must accept to sign up (a required checkbox linking here); null asks for no consent."
            },
            {
              "type": "null"
            }
          ]
        },
        "branding": {
          "type": "object",
          "required": [
            "productName",
            "logoUrl",
            "primaryColor"
          ],
          "properties": {
            "productName": {
              "anyOf": [
                {
                  "type": "string",
                  "minLength": 1,
                  "maxLength": 100,
                  "description": "Shown in page titles, headings and mails; null shows the environment's name."
                },
                {
                  "type": "null"
                }
              ]
            },
            "logoUrl": {
              "anyOf": [
                {
                  "type": "string",
                  "format": "uri",
                  "maxLength": 2048,
                  "description": "The logo on the pages and in mails."
                },
                {
                  "type": "null"
                }
              ]
            },
            "primaryColor": {
              "anyOf": [
                {
                  "type": "string",
                  "pattern": "^#[0-9a-fA-F]{6}$",
                  "description": "The buttons' colour, as #rrggbb; white text sits on it, so pick one dark enough (WCAG AA)."
                },
                {
                  "type": "null"
                }
              ]
            }
          },
          "additionalProperties": false,
          "description": "How the pages and mails look."
        }
      },
      "additionalProperties": false,
      "description": "The sign-in, sign-up and account pages Gatehouse serves on the frontend host."
    }
  },
  "additionalProperties": false,
  "title": "EnvironmentSettings"
} as const;
