import Link from 'next/link';

export default function Home() {
  return (
    <main>
      <h1>Gatehouse + Next.js</h1>
      <p><Link href="/dashboard">Dashboard</Link> (signed in only) · <Link href="/api/me">/api/me</Link></p>
    </main>
  );
}
