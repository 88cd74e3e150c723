import 'reflect-metadata';
import { runServiceMain } from '@crm/runtime';
import { webhooksApp } from './webhooks.app';

runServiceMain('webhooks', () => webhooksApp(process.env));
