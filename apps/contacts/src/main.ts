import 'reflect-metadata';
import { runServiceMain } from '@crm/runtime';
import { contactsApp } from './contacts.app';

runServiceMain('contacts', () => contactsApp);
