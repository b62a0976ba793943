const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a value from a path or a form is a UUID, checked before it reaches a uuid column (which would refuse it with a 500). */
export const isUuid = (value: string) => UUID.test(value);
