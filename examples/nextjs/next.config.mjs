/** @type {import('next').NextConfig} */
export default {
  // Inside this repository @gatehouse/sdk is a workspace of TypeScript source whose imports end in `.js`
  // (NodeNext), which webpack maps to the `.ts` files and Turbopack cannot yet (vercel/next.js#82945): hence
  // `--webpack` in package.json. An app installing the built package from npm needs none of this.
  transpilePackages: ['@gatehouse/sdk'],
  webpack: (config) => {
    config.resolve.extensionAlias = { '.js': ['.ts', '.tsx', '.js'] };
    return config;
  },
};
