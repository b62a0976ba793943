import { useEffect, useRef, type ReactNode } from 'react';

/**
 * A screen's heading and the document's title. After a client-side navigation the heading takes focus, so a
 * screen reader announces the new screen and the next Tab starts from it, as after a page load.
 */
export function Page({ title, children, focusHeading = true }: { title: string; children: ReactNode; focusHeading?: boolean }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Gatehouse dashboard`;
    if (focusHeading) heading.current?.focus();
  }, [title, focusHeading]);
  return (
    <>
      <h1 ref={heading} tabIndex={-1}>{title}</h1>
      {children}
    </>
  );
}
