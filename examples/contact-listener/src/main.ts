import 'reflect-metadata';
import { startContactListener } from './contact-listener';

void startContactListener(process.env.NATS_URL ?? 'nats://127.0.0.1:4222', (event, subject) => {
  process.stdout.write(`${subject} ${event.id} ${event.data.contact_id}\n`);
}).then((app) => {
  const stop = () => void app.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
});
