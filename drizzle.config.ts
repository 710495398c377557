import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './shared/postgres/schema.ts',
  out: './drizzle',
});
