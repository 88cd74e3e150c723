import { IsEmail, IsString, Matches, MaxLength } from 'class-validator';
import { Normalise, Rules, Trim } from '../dto-helpers';
import { ContactsLimits } from './values';

const EMAIL_MESSAGE = 'email must be a valid email address';

/** `email` of a contact, a team member or a captured person, lowercased so that one address is one email whatever its case. */
export const Email = (): PropertyDecorator =>
  Rules(
    Normalise(),
    IsString({ message: EMAIL_MESSAGE }),
    MaxLength(ContactsLimits.email, { message: `email must be at most ${ContactsLimits.email} characters` }),
    IsEmail({}, { message: EMAIL_MESSAGE }),
  );

/** `search` of a list: a trimmed phrase without control characters. */
export const SearchText = (): PropertyDecorator =>
  Rules(
    Trim(),
    IsString({ message: 'search must be a string' }),
    Matches(/^[^\u0000-\u001f]{1,200}$/, { message: `search must be 1 to ${ContactsLimits.search} characters without control characters` }),
  );
