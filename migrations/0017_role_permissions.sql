-- Permissions become data: each role of a stored set carries the list of what it lets its members do on
-- the client plane (src/organizations/policy.ts). A role stored before carries, from now on, the rights its
-- key gave it in code: `owner` every permission, `admin` all but deleting the organization, any other none.
-- rolling-upgrade: the version before reads a role's key and name and ignores the permissions added here; a set
-- it creates meanwhile has roles without permissions, which this version reads as their keys' defaults (toRole in
-- src/organizations/store.ts): the very rights the version before gave them.
UPDATE organization_role_sets s
SET roles = (
  SELECT jsonb_agg(
    CASE
      WHEN r.role ? 'permissions' THEN r.role
      ELSE r.role || jsonb_build_object('permissions', CASE r.role ->> 'key'
        WHEN 'owner' THEN '["organization:update", "organization:delete", "members:manage", "invitations:manage"]'::jsonb
        WHEN 'admin' THEN '["organization:update", "members:manage", "invitations:manage"]'::jsonb
        ELSE '[]'::jsonb
      END)
    END
    ORDER BY r.position)
  FROM jsonb_array_elements(s.roles) WITH ORDINALITY AS r(role, position)
)
WHERE EXISTS (SELECT 1 FROM jsonb_array_elements(s.roles) AS r(role) WHERE NOT r.role ? 'permissions');
