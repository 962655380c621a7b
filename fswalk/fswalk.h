/*
 * factory-fswalk (fswalk/): one job of root's on a tree that an agent,
 * a setup or an image wrote.
 */
#ifndef FSWALK_H
#define FSWALK_H

#include "fswalkmsg.h"

/* pristine.c */
void	 fswalk_pristine(struct mread *, struct fswalk_answer *);

/* setup.c */
void	 fswalk_setup_store(struct mread *, struct fswalk_answer *);
void	 fswalk_setup_seal(struct mread *, struct fswalk_answer *);
void	 fswalk_setup_inputs(struct mread *, struct fswalk_answer *);
void	 fswalk_setup_remove(struct mread *, struct fswalk_answer *);

#endif /* FSWALK_H */
