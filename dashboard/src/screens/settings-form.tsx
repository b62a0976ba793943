import { environmentSettingsSchema } from '@gatehouse/sdk';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { adminApi, GatehouseError, type Environment } from '../api/gatehouse.js';
import { ProblemMessage } from '../ui/states.js';

/** The part of JSON Schema the settings use (what the SDK's generated EnvironmentSettings holds). */
interface JsonSchema {
  type?: string; description?: string; format?: string; pattern?: string;
  minimum?: number; maximum?: number; minLength?: number; maxLength?: number;
  enum?: readonly unknown[]; anyOf?: readonly JsonSchema[]; items?: JsonSchema;
  properties?: Readonly<Record<string, JsonSchema>>;
}
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const SCHEMA = environmentSettingsSchema as unknown as JsonSchema;

/** What a field is, read from its schema: nullable (anyOf with null), a choice (literals), or its own type. */
function describe(schema: JsonSchema): { nullable: boolean; inner: JsonSchema; choices?: string[]; description?: string } {
  const options = schema.anyOf ?? [schema];
  const nonNull = options.filter((option) => option.type !== 'null');
  const nullable = nonNull.length < options.length;
  const literals = nonNull.flatMap((option) => option.enum ?? []);
  const inner = nonNull.length === 1 ? nonNull[0] : schema;
  const description = schema.description ?? inner.description;
  if (literals.length > 0 && literals.length >= nonNull.length) return { nullable, inner, choices: literals.map(String), description };
  return { nullable, inner, description };
}

const ACRONYMS: Record<string, string> = { url: 'URL', jwt: 'JWT', mfa: 'MFA', ip: 'IP', rp: 'RP', id: 'ID', oauth: 'OAuth' };

/** "impersonationLandingUrl": "Impersonation landing URL". */
export function labelOf(key: string): string {
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').split(' ').map((word) => ACRONYMS[word.toLowerCase()] ?? word.toLowerCase());
  const first = words[0];
  return [first === first.toLowerCase() ? first[0].toUpperCase() + first.slice(1) : first, ...words.slice(1)].join(' ');
}

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Only what changed, as the PATCH deep-merges it: changed leaves under their objects; arrays whole. */
export function changesOf(before: JsonObject, after: JsonObject): JsonObject {
  const patch: JsonObject = {};
  for (const [key, value] of Object.entries(after)) {
    const old = before[key];
    if (isObject(old) && isObject(value)) {
      const inner = changesOf(old, value);
      if (Object.keys(inner).length > 0) patch[key] = inner;
    } else if (JSON.stringify(old) !== JSON.stringify(value)) {
      patch[key] = value;
    }
  }
  return patch;
}

/** The changed paths in words, for the saved message ("Password policy › Min length"). */
function changedNames(patch: JsonObject, prefix: string[] = []): string[] {
  return Object.entries(patch).flatMap(([key, value]) =>
    isObject(value) ? changedNames(value, [...prefix, labelOf(key)]) : [[...prefix, labelOf(key)].join(' › ')]);
}

const setIn = (object: JsonObject, path: string[], value: Json): JsonObject => {
  const [head, ...rest] = path;
  return { ...object, [head]: rest.length === 0 ? value : setIn(isObject(object[head]) ? object[head] : {}, rest, value) };
};

/** The form's field errors by settings path ("passwordPolicy/minLength"), from the problem's /body/settings/... paths. */
function fieldErrors(error: unknown): Map<string, string> {
  const byPath = new Map<string, string>();
  if (error instanceof GatehouseError) {
    for (const field of error.errors) byPath.set(field.path.replace(/^\/body\/settings\/?/, ''), field.message);
  }
  return byPath;
}

interface FieldContext { errors: Map<string, string>; onChange: (path: string[], value: Json) => void }

/** The environment's settings as a form generated from the schema the admin API validates them with. */
export function SettingsForm({ environment }: { environment: Environment }) {
  const queryClient = useQueryClient();
  const saved = environment.settings as unknown as JsonObject;
  // The settings as the form was filled (or last saved): the patch is what the operator changed from them, so
  // a setting another operator changed meanwhile (a refetch updates `environment`) is never sent back.
  const [base, setBase] = useState<JsonObject>(saved);
  const [draft, setDraft] = useState<JsonObject>(saved);
  const [message, setMessage] = useState('');
  const patch = changesOf(base, draft);
  const dirty = Object.keys(patch).length > 0;
  const save = useMutation({
    mutationFn: (settings: JsonObject) => adminApi.updateEnvironment({ id: environment.id, settings }),
    onSuccess: (updated, sent) => {
      queryClient.setQueryData(['environment', environment.id], updated);
      setBase(updated.settings as unknown as JsonObject);
      setDraft(updated.settings as unknown as JsonObject);
      setMessage(`Saved: ${changedNames(sent).join(', ')}.`);
      void queryClient.invalidateQueries({ queryKey: ['environments'] });
    },
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setMessage('');
    if (!dirty) { setMessage('No changes to save.'); return; }
    save.mutate(patch);
  };
  const context: FieldContext = {
    errors: fieldErrors(save.error),
    onChange: (path, value) => { setMessage(''); setDraft((current) => setIn(current, path, value)); },
  };
  return (
    <form className="settings-form" onSubmit={onSubmit} noValidate aria-describedby="settings-form-help">
      <p id="settings-form-help" className="muted">Saving sends only the settings you changed. An empty optional field is not set (null).</p>
      <ObjectFields schema={SCHEMA} value={draft} path={[]} context={context} />
      <div className="actions settings-save">
        <button type="submit" className="primary" disabled={save.isPending}>{save.isPending ? 'Saving…' : 'Save settings'}</button>
        <button type="button" disabled={!dirty || save.isPending} onClick={() => { save.reset(); setMessage(''); setBase(saved); setDraft(saved); }}>Discard changes</button>
        <p role="status" className="settings-state">{message || (dirty ? 'You have unsaved changes.' : '')}</p>
      </div>
      <ProblemMessage error={save.error} />
    </form>
  );
}

function ObjectFields({ schema, value, path, context }: { schema: JsonSchema; value: JsonObject; path: string[]; context: FieldContext }) {
  return (
    <>
      {Object.entries(schema.properties ?? {}).map(([key, child]) => (
        <Field key={key} name={key} schema={child} value={value[key] ?? null} path={[...path, key]} context={context} />
      ))}
    </>
  );
}

function Field({ name, schema, value, path, context }: { name: string; schema: JsonSchema; value: Json; path: string[]; context: FieldContext }) {
  const { nullable, inner, choices, description } = describe(schema);
  const id = `setting-${path.join('-')}`;
  const error = context.errors.get(path.join('/'));
  const label = labelOf(name);
  const help = description ? `${id}-help` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [help, errorId].filter(Boolean).join(' ') || undefined;
  const helpText = description && <p id={help} className="help">{description}</p>;
  const errorText = error && <p id={errorId} className="field-error">{label}: {error}</p>;
  const change = (next: Json) => context.onChange(path, next);

  if (inner.type === 'object' && inner.properties) {
    return (
      <fieldset className="setting-group" aria-describedby={describedBy}>
        <legend>{label}</legend>
        {helpText}
        {errorText}
        <ObjectFields schema={inner} value={isObject(value) ? value : {}} path={path} context={context} />
      </fieldset>
    );
  }
  if (inner.type === 'boolean') {
    return (
      <div className="setting setting-check">
        <input id={id} type="checkbox" checked={value === true} onChange={(event) => change(event.target.checked)} aria-describedby={describedBy} aria-invalid={error ? true : undefined} />
        <label htmlFor={id}>{label}</label>
        {helpText}
        {errorText}
      </div>
    );
  }
  if (inner.type === 'array' && inner.items) {
    const options = describe(inner.items).choices ?? [];
    const selected = Array.isArray(value) ? value.map(String) : [];
    return (
      <fieldset className="setting-group setting-choices" aria-describedby={describedBy}>
        <legend>{label}</legend>
        {helpText}
        {options.map((option) => (
          <div key={option} className="setting-check">
            <input id={`${id}-${option}`} type="checkbox" checked={selected.includes(option)}
              onChange={(event) => change(event.target.checked ? options.filter((o) => o === option || selected.includes(o)) : selected.filter((o) => o !== option))} />
            <label htmlFor={`${id}-${option}`}>{option}</label>
          </div>
        ))}
        {errorText}
      </fieldset>
    );
  }
  if (choices) {
    return (
      <div className="setting">
        <label htmlFor={id}>{label}</label>
        <select id={id} value={value === null ? '' : String(value)} onChange={(event) => change(event.target.value === '' ? null : event.target.value)}
          aria-describedby={describedBy} aria-invalid={error ? true : undefined}>
          {nullable && <option value="">(not set)</option>}
          {choices.map((choice) => <option key={choice} value={choice}>{choice}</option>)}
        </select>
        {helpText}
        {errorText}
      </div>
    );
  }
  const numeric = inner.type === 'integer' || inner.type === 'number';
  const text = value === null ? '' : String(value);
  const onText = (raw: string) => {
    if (raw === '') change(nullable ? null : '');
    else if (numeric && raw.trim() !== '' && Number.isFinite(Number(raw))) change(Number(raw));
    else change(raw);
  };
  return (
    <div className="setting">
      <label htmlFor={id}>{label}</label>
      <div className="setting-input">
        <input id={id} type={numeric ? 'number' : inner.format === 'uri' ? 'url' : 'text'} value={text} onChange={(event) => onText(event.target.value)}
          {...(numeric && { min: inner.minimum, max: inner.maximum, step: inner.type === 'integer' ? 1 : 'any', inputMode: 'numeric' as const })}
          {...(!numeric && inner.maxLength !== undefined && { maxLength: inner.maxLength })}
          placeholder={nullable ? 'Not set' : undefined}
          aria-describedby={describedBy} aria-invalid={error ? true : undefined} />
        {nullable && (
          <button type="button" onClick={() => change(null)} disabled={value === null}>Clear<span className="visually-hidden"> {label}</span></button>
        )}
      </div>
      {helpText}
      {errorText}
    </div>
  );
}
