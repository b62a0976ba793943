/**
 * The OAuth bench's provider, as its own process (so its CPU is not the service's): the tests' scriptable
 * OpenID provider on PORT, with the client secret from BENCH_CLIENT_SECRET. Each sign-in names its person
 * with `test_subject`; their email is `<subject>@bench.example.com`, verified.
 */
import { startScriptableProvider } from '../../test/helpers/scriptable-provider.js';

const provider = await startScriptableProvider({ port: Number(process.env.PORT), clientSecret: process.env.BENCH_CLIENT_SECRET });
provider.script.tamper = (claims) => ({ ...claims, email: `${String(claims.sub)}@bench.example.com`, email_verified: true });
process.on('SIGTERM', () => void provider.close().then(() => process.exit(0)));
