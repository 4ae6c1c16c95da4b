const VISITOR_KEY = 'parley:visitor-id';

/**
 * The visitor's id when the page gives none: a random id kept in localStorage (per page origin), so a reload is the
 * same visitor (and supersedes its older call); when storage is blocked, one id for this page view.
 */
export function storedVisitorId(): string {
  let id: string | null = null;
  try {
    id = localStorage.getItem(VISITOR_KEY);
    if (id === null || !/^[A-Za-z0-9._:-]{8,80}$/.test(id)) {
      id = `v_${crypto.randomUUID()}`;
      localStorage.setItem(VISITOR_KEY, id);
    }
  } catch {
    id ??= `v_${crypto.randomUUID()}`; // storage blocked: this page view only
  }
  return id;
}
