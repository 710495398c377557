import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './producer/postgres/schema.ts',
  out: './drizzle',
});
