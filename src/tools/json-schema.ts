import type { ValidationIssue } from '../errors/index.js';

/**
 * The JSON Schema subset a tool's `parameters` may use, and the check of a model's arguments against it. Small on
 * purpose: what a model fills in reliably and what Parley can check before any request leaves (docs/tools.md).
 *
 * - the root: `{ type: 'object', properties, required?, additionalProperties?, description? }`
 * - `string` (`enum`, `format`: email | date | date-time, `minLength`, `maxLength`), `number` and `integer` (`enum`,
 *   `minimum`, `maximum`), `boolean`, `object` (as the root), `array` (`items`, `minItems`, `maxItems`)
 * - `description` anywhere. Any other keyword is refused (so nothing the owner wrote is silently unchecked).
 * - An object's properties not in `properties` are refused unless `additionalProperties: true`.
 */
export type JsonSchema = Record<string, unknown>;

const MAX_DEPTH = 5;
const MAX_PROPERTIES = 50;
const STRING_FORMATS = ['email', 'date', 'date-time'] as const;

const KEYWORDS: Record<string, readonly string[]> = {
  string: ['enum', 'format', 'minLength', 'maxLength'],
  number: ['enum', 'minimum', 'maximum'],
  integer: ['enum', 'minimum', 'maximum'],
  boolean: [],
  object: ['properties', 'required', 'additionalProperties'],
  array: ['items', 'minItems', 'maxItems'],
};

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isCount = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** Every way `schema` leaves the subset, each with its path (`body.parameters.properties.orderId.type`). */
export function schemaIssues(schema: unknown, path = 'body.parameters'): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (!isRecord(schema) || schema['type'] !== 'object') {
    return [{ path, message: 'must be a JSON Schema object with type "object"' }];
  }
  checkNode(schema, path, 0, issues);
  return issues;
}

function checkNode(node: unknown, path: string, depth: number, issues: ValidationIssue[]): void {
  if (!isRecord(node)) return void issues.push({ path, message: 'must be a JSON Schema object' });
  if (depth > MAX_DEPTH) return void issues.push({ path, message: `nests deeper than ${MAX_DEPTH} levels` });
  const type = node['type'];
  if (typeof type !== 'string' || !(type in KEYWORDS)) {
    return void issues.push({
      path: `${path}.type`,
      message: 'must be one of string, number, integer, boolean, object, array',
    });
  }
  for (const key of Object.keys(node)) {
    if (key !== 'type' && key !== 'description' && !KEYWORDS[type]!.includes(key))
      issues.push({ path: `${path}.${key}`, message: `is not supported for type ${type}` });
  }
  if ('description' in node && typeof node['description'] !== 'string')
    issues.push({ path: `${path}.description`, message: 'must be a string' });
  if ('enum' in node) {
    const values = node['enum'];
    const ok =
      Array.isArray(values) &&
      values.length > 0 &&
      values.length <= 100 &&
      values.every((v) => (type === 'string' ? typeof v === 'string' : typeof v === 'number'));
    if (!ok) issues.push({ path: `${path}.enum`, message: `must be 1 to 100 values of type ${type}` });
  }
  if ('format' in node && !(STRING_FORMATS as readonly unknown[]).includes(node['format']))
    issues.push({ path: `${path}.format`, message: `must be one of ${STRING_FORMATS.join(', ')}` });
  for (const key of ['minLength', 'maxLength', 'minItems', 'maxItems'])
    if (key in node && !isCount(node[key])) issues.push({ path: `${path}.${key}`, message: 'must be an integer ≥ 0' });
  for (const key of ['minimum', 'maximum'])
    if (key in node && typeof node[key] !== 'number')
      issues.push({ path: `${path}.${key}`, message: 'must be a number' });
  if (type === 'array') {
    if (!('items' in node)) issues.push({ path: `${path}.items`, message: 'is required for an array' });
    else checkNode(node['items'], `${path}.items`, depth + 1, issues);
  }
  if (type === 'object') {
    const properties = node['properties'] ?? {};
    if (!isRecord(properties)) return void issues.push({ path: `${path}.properties`, message: 'must be an object' });
    const names = Object.keys(properties);
    if (names.length > MAX_PROPERTIES)
      issues.push({ path: `${path}.properties`, message: `has more than ${MAX_PROPERTIES} properties` });
    for (const name of names) {
      if (!/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(name))
        issues.push({ path: `${path}.properties.${name}`, message: 'is not a property name (letters, digits, _)' });
      checkNode(properties[name], `${path}.properties.${name}`, depth + 1, issues);
    }
    if ('required' in node) {
      const required = node['required'];
      if (!Array.isArray(required) || !required.every((r) => typeof r === 'string' && names.includes(r)))
        issues.push({ path: `${path}.required`, message: 'must list names of its properties' });
    }
    if ('additionalProperties' in node && typeof node['additionalProperties'] !== 'boolean')
      issues.push({ path: `${path}.additionalProperties`, message: 'must be true or false' });
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Every way `value` fails `schema` (a schema that passed {@link schemaIssues}); paths start at `arguments`. */
export function argumentIssues(value: unknown, schema: JsonSchema, path = 'arguments'): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  checkValue(value, schema, path, issues);
  return issues;
}

function checkValue(value: unknown, schema: JsonSchema, path: string, issues: ValidationIssue[]): void {
  const type = schema['type'];
  const fail = (message: string) => issues.push({ path, message });
  switch (type) {
    case 'string': {
      if (typeof value !== 'string') return void fail('must be a string');
      const min = schema['minLength'] as number | undefined;
      const max = schema['maxLength'] as number | undefined;
      if (min !== undefined && value.length < min) fail(`must have at least ${min} characters`);
      if (max !== undefined && value.length > max) fail(`must have at most ${max} characters`);
      const format = schema['format'];
      if (format === 'email' && !EMAIL.test(value)) fail('must be an email address');
      if (format === 'date' && !(DATE.test(value) && !Number.isNaN(Date.parse(value))))
        fail('must be a date (YYYY-MM-DD)');
      if (format === 'date-time' && !(value.includes('T') && !Number.isNaN(Date.parse(value))))
        fail('must be an ISO 8601 date and time');
      break;
    }
    case 'number':
    case 'integer': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return void fail(`must be a ${type}`);
      if (type === 'integer' && !Number.isInteger(value)) return void fail('must be an integer');
      const min = schema['minimum'] as number | undefined;
      const max = schema['maximum'] as number | undefined;
      if (min !== undefined && value < min) fail(`must be at least ${min}`);
      if (max !== undefined && value > max) fail(`must be at most ${max}`);
      break;
    }
    case 'boolean':
      if (typeof value !== 'boolean') fail('must be true or false');
      break;
    case 'array': {
      if (!Array.isArray(value)) return void fail('must be an array');
      const min = schema['minItems'] as number | undefined;
      const max = schema['maxItems'] as number | undefined;
      if (min !== undefined && value.length < min) fail(`must have at least ${min} items`);
      if (max !== undefined && value.length > max) fail(`must have at most ${max} items`);
      value.forEach((item, i) => checkValue(item, schema['items'] as JsonSchema, `${path}.${i}`, issues));
      break;
    }
    case 'object': {
      if (!isRecord(value)) return void fail('must be an object');
      const properties = (schema['properties'] ?? {}) as Record<string, JsonSchema>;
      for (const name of (schema['required'] ?? []) as string[])
        if (value[name] === undefined) issues.push({ path: `${path}.${name}`, message: 'is required' });
      for (const [name, item] of Object.entries(value)) {
        const property = properties[name];
        if (property) checkValue(item, property, `${path}.${name}`, issues);
        else if (schema['additionalProperties'] !== true)
          issues.push({ path: `${path}.${name}`, message: 'is not a parameter of this tool' });
      }
      break;
    }
  }
  const allowed = schema['enum'];
  if (Array.isArray(allowed) && !allowed.includes(value)) fail(`must be one of ${allowed.join(', ')}`);
}
